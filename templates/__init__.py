"""jinja2 transform-dialect templates, shipped inside the wheel (package data)."""
