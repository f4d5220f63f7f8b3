"""partial."""
