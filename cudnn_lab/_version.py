"""The kit's version, alone in a module: pyproject.toml and the report read it without the package face."""

__version__ = "0.1.0"
