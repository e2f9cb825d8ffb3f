"""The GECOBench leaderboard Space: data shaping (tables), figures, store loading and the Gradio app."""
