"""The domain rules tested alone: pure functions, no store, no files."""
