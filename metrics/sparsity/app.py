"""The Hub Space widget of the sparsity module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("sparsity.py", module_type="metric")
launch_gradio_widget(module)
