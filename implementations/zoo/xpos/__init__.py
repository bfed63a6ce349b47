"""Zoo members of the xpos family: xPos."""
