"""The web game's routes, one router per resource; scripts.webapp.server includes them."""
