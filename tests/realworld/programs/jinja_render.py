"""A templating engine: render a page from a template directory with jinja2."""

import jinja2

environment = jinja2.Environment(
    loader=jinja2.FileSystemLoader("templates"), autoescape=jinja2.select_autoescape()
)
page = environment.get_template("page.html").render(
    title="Report", items=[{"name": "north", "amount": 162.75}, {"name": "<east>", "amount": 310}]
)
print(page)
