"""Replay: play real conversation histories through memfold as a support-bot backend would (issue 9)."""
