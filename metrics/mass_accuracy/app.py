"""The Hub Space widget of the mass_accuracy metric module (`python app.py` on the Space)."""

from pathlib import Path

import evaluate

from gecobench.metrics.widget import metric_widget  # From: gecobench-hub

# this folder's script, whatever the working directory (the Space's root, or a checkout's metrics/mass_accuracy)
module = evaluate.load(str(Path(__file__).resolve().parent / "mass_accuracy.py"))  # a metric or a measurement: evaluate reads which
demo = metric_widget(module)

if __name__ == "__main__":
    demo.launch()
