"""FTA-Mem: Fact-Time-Affect anchored memory for low-density long-term dialogue (the library)."""

__version__ = "0.1.0"
