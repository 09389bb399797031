"""One module a `tdgammon` subcommand; each defines `register(subparsers)`."""
