"""Robot-description compiler: sources in, verified identity-stamped artifacts out."""

__version__ = "0.1.0"
