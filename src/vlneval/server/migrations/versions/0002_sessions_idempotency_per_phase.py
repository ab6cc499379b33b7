"""Login sessions; idempotency keys scoped to a phase.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-20
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Adds ``sessions``; the submission key unique per (team, phase, key)."""
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
    )
    op.create_index("ix_sessions_team_id", "sessions", ["team_id"])
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint("uq_submissions_team_client_key", type_="unique")
        batch.create_unique_constraint(
            "uq_submissions_team_phase_client_key", ["team_id", "phase_id", "client_key"]
        )


def downgrade() -> None:
    """Drops ``sessions``; keys unique per team again."""
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint("uq_submissions_team_phase_client_key", type_="unique")
        batch.create_unique_constraint("uq_submissions_team_client_key", ["team_id", "client_key"])
    op.drop_index("ix_sessions_team_id", "sessions")
    op.drop_table("sessions")
