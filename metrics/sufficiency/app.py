"""The Hub Space widget of the sufficiency module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("sufficiency.py", module_type="metric")
launch_gradio_widget(module)
