"""Cubeful equity, match equity and games with the cube."""
