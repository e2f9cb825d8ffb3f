"""The Hub Space widget of the label_difference module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("label_difference.py", module_type="metric")
launch_gradio_widget(module)
