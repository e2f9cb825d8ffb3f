"""The Hub Space widget of the small_noise_check module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("small_noise_check.py", module_type="metric")
launch_gradio_widget(module)
