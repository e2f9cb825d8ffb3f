"""The Hub Space widget of the auprc module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("auprc.py", module_type="metric")
launch_gradio_widget(module)
