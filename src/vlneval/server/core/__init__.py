"""Server core: settings, database engines, authentication, sessions, rate limits, migrations."""
