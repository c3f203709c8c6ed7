"""Pieces of the Streamlit chat (streamlit_app.py) kept out of the script so they can be
tested and reused: `subgraph` is plain Python (the CLI can print the same Cypher), the
others draw with Streamlit."""
