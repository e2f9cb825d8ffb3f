"""The Hub Space widget of the methods_agreement module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("methods_agreement.py", module_type="metric")
launch_gradio_widget(module)
