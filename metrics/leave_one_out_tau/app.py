"""The Hub Space widget of the leave_one_out_tau metric module (`python app.py` on the Space)."""

from pathlib import Path

import evaluate

from gecobench.metrics.widget import metric_widget  # From: gecobench-hub

# this folder's script, whatever the working directory (the Space's root, or a checkout's metrics/leave_one_out_tau)
module = evaluate.load(str(Path(__file__).resolve().parent / "leave_one_out_tau.py"))  # a metric or a measurement: evaluate reads which
demo = metric_widget(module)

if __name__ == "__main__":
    demo.launch()
