"""The Hub Space widget of the bias_indices module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("bias_indices.py", module_type="measurement")
launch_gradio_widget(module)
