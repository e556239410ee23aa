"""`mnemolog serve`: the local web page over the same services and reads as the CLI."""
