"""Tools over plain HTTP: `POST /tools/{name}` and the OpenAPI document describing them."""
