"""The Hub Space widget of the mass_accuracy module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("mass_accuracy.py", module_type="metric")
launch_gradio_widget(module)
