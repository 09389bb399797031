"""File and wire formats: gnubg Match IDs, FIBS boards, Jellyfish .mat files, the ASCII board."""
