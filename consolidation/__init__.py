"""The sleep-time pass: extractors turn episodes (and archived turns) into semantic facts and
procedural rules through the normal write path, and the nightly APScheduler job runs it once per
fire time across worker processes (DESIGN.md §1 "consolidation", §4.8)."""
