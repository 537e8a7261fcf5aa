"""The NUL walk (issue #28): every operation of openapi.yaml, with a NUL (U+0000) put in
each string it takes in turn (each path parameter, each query parameter, each string of
its JSON body at any depth, and a key of the body), against a running Herald. Herald
stores no NUL (PostgreSQL refuses it in text and jsonb), so every such request must be
refused with 400, code 1003, naming where the NUL is, and none may answer 5xx.

A body is made from the schema: its example when it has one, else the required fields
(every field, for an object with none required) with a value of their type, so the NUL
reaches the field's own checks rather than stopping at a missing one."""

import json
import os
import urllib.parse

NUL = "\u0000"


def load_spec(path):
    import yaml  # PyYAML comes with schemathesis, in the test environment

    with open(path) as f:
        return yaml.safe_load(f)


def resolve(spec, node, depth=0):
    while isinstance(node, dict) and "$ref" in node and depth < 20:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node, depth = target, depth + 1
    return node


def sample(spec, schema, depth=0):
    """A value the schema takes: its example, or one made from its type."""
    schema = resolve(spec, schema or {})
    if depth > 6:
        return None
    if "example" in schema:
        return schema["example"]
    if "examples" in schema and isinstance(schema["examples"], list) and schema["examples"]:
        return schema["examples"][0]
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return sample(spec, schema[key][0], depth + 1)
    if "allOf" in schema:
        merged = {}
        for part in schema["allOf"]:
            value = sample(spec, part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        names = schema.get("required") or list(props)
        return {name: sample(spec, props.get(name, {}), depth + 1) for name in names}
    if kind == "array":
        return [sample(spec, schema.get("items", {}), depth + 1)]
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return "x" * max(1, schema.get("minLength", 1))


def string_paths(value, path=()):
    """The paths of every string in a JSON value."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, element in value.items():
            yield from string_paths(element, path + (key,))
    elif isinstance(value, list):
        for index, element in enumerate(value):
            yield from string_paths(element, path + (index,))


def with_nul(value, path):
    copy = json.loads(json.dumps(value))
    target = copy
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = target[path[-1]] + NUL
    return copy


def field_name(path):
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "body"


def operations(spec):
    for route, item in spec.get("paths", {}).items():
        shared = item.get("parameters", [])
        for method in ("get", "post", "put", "patch", "delete"):
            if method in item:
                yield method.upper(), route, item[method], shared


def run(report, h, auths, parameters):
    """Runs the walk against the running Herald `h`, with `auths` by security scheme and
    real values of the path parameters."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = load_spec(os.path.join(root, "openapi.yaml"))
    sent, refused, failures = 0, 0, []
    for method, route, op, shared in operations(spec):
        params = [resolve(spec, p) for p in shared + op.get("parameters", [])]
        security = [name for req in op.get("security", spec.get("security", [])) for name in req]
        auth = next((auths[name] for name in security if name in auths), {})
        values = {p["name"]: parameters.get(p["name"], sample(spec, p.get("schema"))) for p in params}
        body = None
        content = resolve(spec, op.get("requestBody", {})).get("content", {})
        if "application/json" in content:
            media = content["application/json"]
            body = media.get("example") if "example" in media else sample(spec, media.get("schema"))

        def send(values, body, where):
            nonlocal sent, refused
            path = route
            query = {}
            for p in params:
                value = values.get(p["name"])
                if value is None:
                    continue
                if p.get("in") == "path":
                    path = path.replace("{" + p["name"] + "}", urllib.parse.quote(str(value), safe=""))
                elif p.get("in") == "query" and (p.get("required") or p["name"] == where):
                    query[p["name"]] = value if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict)) else str(value).lower() if isinstance(value, bool) else str(value)
            if query:
                path += "?" + urllib.parse.urlencode(query)
            status, answer, _ = h.api(timeout=45).call(method, path, body, **auth)
            sent += 1
            code = answer.get("error", {}).get("code") if isinstance(answer, dict) and isinstance(answer.get("error"), dict) else None
            message = answer.get("error", {}).get("message", "") if code else ""
            if status >= 500 or status == 0:
                failures.append(f"{method} {route} NUL in {where}: {status} {str(answer)[:160]}")
            elif status == 400 and code == 1003 and "U+0000" in message:
                refused += 1
            elif status < 300:
                failures.append(f"{method} {route} NUL in {where}: accepted ({status})")
            # Another 4xx (a resource the NUL made unknown, a refused credential) stored
            # nothing either.

        for p in params:
            if p.get("in") == "query" or (p.get("in") == "path" and isinstance(values.get(p["name"]), str)):
                value = values.get(p["name"])
                text = value if isinstance(value, str) else "x"
                send({**values, p["name"]: text + NUL}, body, p["name"])
        if isinstance(body, (dict, list)):
            for path in string_paths(body):
                send(values, with_nul(body, path), field_name(path))
            if isinstance(body, dict):
                send(values, {**body, "k" + NUL: "v"}, "a key")
    report.info(f"{sent} requests with a NUL over {sum(1 for _ in operations(spec))} operations; {refused} refused naming the NUL")
    for failure in failures:
        report.check(False, failure)
    if not failures:
        report.check(True, "no 5xx, nothing with a NUL accepted")
    report.check(h.alive(), "herald still running")
