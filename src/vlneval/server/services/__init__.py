"""Server services: accepting, storing, validating, queueing and scoring submissions; leaderboards and exports."""
