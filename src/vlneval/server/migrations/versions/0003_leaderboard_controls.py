"""Leaderboard controls, bootstrap intervals, session idle time.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

SUBMISSION_COLUMNS = (
    "team_hidden", "withdrawn_at", "moderation", "moderation_reason", "flag_reason", "baseline",
)  # fmt: skip


def upgrade() -> None:
    """Adds the team's and the organisers' controls of each entry, the phase's entry rule, the
    teams' chosen entries, the results' intervals and the sessions' last use."""
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(
            sa.Column("team_hidden", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("withdrawn_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("moderation", sa.String(16), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("moderation_reason", sa.Text(), nullable=False, server_default="")
        )
        batch.add_column(sa.Column("flag_reason", sa.Text(), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("baseline", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("phases") as batch:
        batch.add_column(
            sa.Column("entry_rule", sa.String(16), nullable=False, server_default="best")
        )
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("intervals", sa.JSON(), nullable=True))
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("last_seen_at", sa.DateTime(), nullable=True))
    op.create_table(
        "team_entries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("phase_id", sa.Integer(), sa.ForeignKey("phases.id"), nullable=False),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("submission_id", sa.Integer(), sa.ForeignKey("submissions.id"), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("phase_id", "team_id", name="uq_team_entries_phase_team"),
    )


def downgrade() -> None:
    """Removes what :func:`upgrade` added."""
    op.drop_table("team_entries")
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("last_seen_at")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("intervals")
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("entry_rule")
    with op.batch_alter_table("submissions") as batch:
        for name in SUBMISSION_COLUMNS:
            batch.drop_column(name)
