"""mnemolog projections layer."""
