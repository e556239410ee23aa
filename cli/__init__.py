"""mnemolog cli layer."""
