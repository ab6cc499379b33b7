"""Initial schema: challenges, phases, teams, submissions, results.

Revision ID: 0001
Revises:
Create Date: 2026-11-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Creates the five tables."""
    op.create_table(
        "challenges",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("slug", sa.String(64), nullable=False, unique=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "phases",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("challenge_id", sa.Integer(), sa.ForeignKey("challenges.id"), nullable=False),
        sa.Column("slug", sa.String(64), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("task", sa.String(64), nullable=False),
        sa.Column("split", sa.String(64), nullable=False),
        sa.Column("profile", sa.String(64), nullable=False),
        sa.Column("episodes_file", sa.Text(), nullable=True),
        sa.Column("graphs_dir", sa.Text(), nullable=True),
        sa.Column("data_sha256", sa.String(64), nullable=True),
        sa.Column("n_episodes", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("leaderboard_public", sa.Boolean(), nullable=False),
        sa.Column("primary_metric", sa.String(32), nullable=False),
        sa.Column("higher_is_better", sa.Boolean(), nullable=False),
        sa.Column("daily_quota", sa.Integer(), nullable=True),
        sa.Column("total_quota", sa.Integer(), nullable=True),
        sa.Column("opens_at", sa.DateTime(), nullable=True),
        sa.Column("closes_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("challenge_id", "slug", name="uq_phases_challenge_slug"),
    )
    op.create_index("ix_phases_challenge_id", "phases", ["challenge_id"])
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("token_prefix", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("uid", sa.String(32), nullable=False, unique=True),
        sa.Column("phase_id", sa.Integer(), sa.ForeignKey("phases.id"), nullable=False),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("client_key", sa.String(64), nullable=True),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("storage_key", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error_kind", sa.String(16), nullable=True),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.Column("declared", sa.JSON(), nullable=False),
        sa.Column("method", sa.String(100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("url", sa.String(500), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("claimed_by", sa.String(100), nullable=True),
        sa.Column("claim_token", sa.String(32), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.UniqueConstraint("team_id", "client_key", name="uq_submissions_team_client_key"),
    )
    op.create_index("ix_submissions_team_id", "submissions", ["team_id"])
    op.create_index("ix_submissions_status_lease", "submissions", ["status", "lease_expires_at"])
    op.create_index(
        "ix_submissions_phase_team_created", "submissions", ["phase_id", "team_id", "created_at"]
    )
    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "submission_id",
            sa.Integer(),
            sa.ForeignKey("submissions.id"),
            nullable=False,
            unique=True,
        ),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("primary_value", sa.Float(), nullable=True),
        sa.Column("n_episodes", sa.Integer(), nullable=False),
        sa.Column("scorer_version", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    """Drops the five tables."""
    for table in ("results", "submissions", "teams", "phases", "challenges"):
        op.drop_table(table)
