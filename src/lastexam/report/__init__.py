"""Reports of results: one self-contained HTML file, and CSV/JSON leaderboard exports."""
