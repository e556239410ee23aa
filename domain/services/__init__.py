"""The use cases: one function per command, over a unit of work and ports; each returns a report."""
