"""The Hub Space widget of the model_randomisation_check module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("model_randomisation_check.py", module_type="metric")
launch_gradio_widget(module)
