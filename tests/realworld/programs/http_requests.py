"""An HTTP client: fetch a page with requests and print what came back."""

import sys

import requests

response = requests.get(sys.argv[1], timeout=10)
print(response.status_code, response.headers["Content-Type"], response.text.strip())
