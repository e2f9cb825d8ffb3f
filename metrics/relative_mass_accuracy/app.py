"""The Hub Space widget of the relative_mass_accuracy module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("relative_mass_accuracy.py", module_type="comparison")
launch_gradio_widget(module)
