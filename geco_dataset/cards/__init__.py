"""Dataset-card templates (Markdown) used by geco_dataset.export; a package so the cards ship as package data."""
