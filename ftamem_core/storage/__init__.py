"""All SQL: the SQLite store (one module per aggregate), its migrations and the FAISS index per case."""
