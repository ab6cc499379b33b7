"""Server-rendered HTML pages and forms."""
