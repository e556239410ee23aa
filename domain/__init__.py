"""mnemolog domain layer."""
