"""mnemolog adapters layer."""
