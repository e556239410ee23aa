"""mnemolog prompts layer."""
