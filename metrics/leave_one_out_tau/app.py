"""The Hub Space widget of the leave_one_out_tau module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("leave_one_out_tau.py", module_type="metric")
launch_gradio_widget(module)
