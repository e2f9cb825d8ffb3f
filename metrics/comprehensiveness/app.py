"""The Hub Space widget of the comprehensiveness module."""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("comprehensiveness.py", module_type="metric")
launch_gradio_widget(module)
