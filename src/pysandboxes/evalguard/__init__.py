"""evalguard."""
