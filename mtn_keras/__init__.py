"""mtn-keras: Multiresolution Transformer Networks for next-query suggestion."""

__version__ = "0.1.0"
