"""The Hub Space widget of the relevance_rank_accuracy module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("relevance_rank_accuracy.py", module_type="metric")
launch_gradio_widget(module)
