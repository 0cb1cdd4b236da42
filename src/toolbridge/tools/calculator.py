"""A safe arithmetic evaluator for the `calculate` tool: a parsed `ast` tree walked by hand, never `eval`.

Only numbers, `+ - * / // % **`, unary `+`/`-`, parentheses, a fixed set of `math` functions and the
constants `pi`, `e` and `tau` are accepted. Limits on input length and on the size of integer results
are checked *before* computing, so `9**9**9` is refused at once instead of eating memory for minutes.
Integers stay exact: `15 + 27` is `42`, and `/` gives an integer when the division is exact.

Why no calculation can hold the interpreter (it runs in a worker thread, but one big-integer operation
keeps the GIL until it ends, freezing every other task): every integer that enters or leaves an
operation has at most `MAX_INTEGER_DIGITS` digits (literals, operator results and function results are
all checked), and on such operands each operation ends within a fraction of a second (the slowest, `pow`
with a modulus, takes about 0.2 s; other tasks run between operations). The exceptions are operations
whose cost grows with an operand's value rather than its size, and those are guarded before computing:
`**` and `pow` by the result's digit count, `round` by its `ndigits`, `factorial` by its argument, and
`lcm` step by step. Shifts are not offered at all.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "CONSTANTS",
    "FUNCTIONS",
    "MAX_EXPRESSION_LENGTH",
    "MAX_INTEGER_DIGITS",
    "CalculationError",
    "evaluate",
    "format_number",
]

Number = int | float
_N = TypeVar("_N", int, float)

MAX_EXPRESSION_LENGTH = 1000
MAX_INTEGER_DIGITS = 1000
_MAX_INTEGER_BITS = int(MAX_INTEGER_DIGITS * math.log2(10)) + 1
_MAX_FACTORIAL_ARGUMENT = 1000


class CalculationError(ValueError):
    """The expression cannot be calculated; the message says why and what is allowed."""


def _factorial(n: Number) -> int:
    if isinstance(n, float):
        if not n.is_integer():
            raise ValueError("it needs a whole number")
        n = int(n)
    if n > _MAX_FACTORIAL_ARGUMENT:
        raise CalculationError(f"factorial() is limited to arguments up to {_MAX_FACTORIAL_ARGUMENT}.")
    return math.factorial(n)


def _log(x: Number, base: Number | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


def _min(*values: Number) -> Number:
    if not values:
        raise ValueError("it needs at least one number")
    return min(values)


def _max(*values: Number) -> Number:
    if not values:
        raise ValueError("it needs at least one number")
    return max(values)


def _round(x: Number, digits: int | None = None) -> Number:
    if digits is None:
        return round(x)
    if isinstance(x, int) and isinstance(digits, int) and digits < 0 and -digits > _max_digits(x):
        # int.__round__ computes 10 ** -digits first: round(10**997, -10**8) would take minutes.
        # |x| < 10 ** digit_count, which is less than half a unit of 10 ** -digits, so it rounds to 0.
        return 0
    return round(x, digits)


def _max_digits(value: int) -> int:
    """An upper bound on the decimal digits of `value`, from its bit length (no conversion)."""
    return int(value.bit_length() * math.log10(2)) + 1


def _pow(base: Number, exponent: Number, modulus: Number | None = None) -> Number:
    if modulus is None:
        return _power(base, exponent)
    # Modular exponentiation works on numbers no larger than the modulus, so it is cheap whatever the
    # exponent's size (and every operand is already within MAX_INTEGER_DIGITS).
    if not all(isinstance(n, int) for n in (base, exponent, modulus)):
        raise ValueError("pow with three arguments needs whole numbers")
    return pow(int(base), int(exponent), int(modulus))


def _lcm(*values: int) -> int:
    # One step at a time, each result checked: lcm of many large coprime numbers grows like a product.
    result = 1
    for value in values:
        result = _check_integer_size(math.lcm(result, value))
    return result


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": _round,
    "min": _min,
    "max": _max,
    "sqrt": math.sqrt,
    "cbrt": math.cbrt,
    "exp": math.exp,
    "log": _log,
    "ln": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "degrees": math.degrees,
    "radians": math.radians,
    "hypot": math.hypot,
    "floor": math.floor,
    "ceil": math.ceil,
    "trunc": math.trunc,
    "factorial": _factorial,
    "gcd": math.gcd,
    "lcm": _lcm,
    "pow": _pow,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

_ALLOWED = (
    f"Allowed: numbers, + - * / // % ** and parentheses, the functions {', '.join(sorted(FUNCTIONS))}, "
    f"and the constants {', '.join(sorted(CONSTANTS))}."
)
# Symbols people and models write that mean the same as Python's operators.
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-"})


def evaluate(expression: str) -> Number:
    """Calculate `expression`; raises `CalculationError` with a message fit to show a model or a user."""
    text = expression.translate(_SYMBOLS).strip()
    if not text:
        raise CalculationError(
            "The expression is empty. Give an arithmetic expression such as '2 * (3 + 4)'."
        )
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CalculationError(
            f"The expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_LENGTH}. "
            "Split the calculation into smaller steps."
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise CalculationError(f"Could not parse {text!r}{where}: {exc.msg}. {_ALLOWED}") from exc
    try:
        result: Number = _Evaluator().visit(tree.body)
    except RecursionError as exc:
        raise CalculationError("The expression is nested too deeply; simplify it.") from exc
    except ZeroDivisionError as exc:
        raise CalculationError("Division by zero is undefined; check the divisor.") from exc
    except OverflowError as exc:
        raise CalculationError("The result is too large to represent; use smaller numbers.") from exc
    if isinstance(result, float) and not math.isfinite(result):
        raise CalculationError("The result is too large to represent (or not a number); use smaller numbers.")
    return result


def format_number(value: Number) -> str:
    """Integers exactly; floats to 15 significant digits, so 0.1 + 0.2 reads 0.3."""
    if isinstance(value, int):
        return str(value)
    return format(value, ".15g")


def _too_many_digits() -> CalculationError:
    return CalculationError(
        f"The result would have more than {MAX_INTEGER_DIGITS} digits; use smaller numbers."
    )


def _check_integer_size(value: _N) -> _N:
    if isinstance(value, int) and value.bit_length() > _MAX_INTEGER_BITS:
        raise _too_many_digits()
    return value


def _power(base: Number, exponent: Number) -> Number:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0:
        digits = int(exponent * math.log10(abs(base))) + 1
        if digits > MAX_INTEGER_DIGITS:
            raise CalculationError(
                f"{_operand(base)} ** {exponent} would have about {digits:,} digits, more than the "
                f"{MAX_INTEGER_DIGITS} allowed; use a smaller exponent."
            )
    result: Number = base**exponent
    if isinstance(result, complex):  # (-8) ** (1/3) in Python is complex
        raise CalculationError(f"{_operand(base)} ** {format_number(exponent)} has no real result.")
    return result


def _operand(value: Number) -> str:
    return f"({format_number(value)})" if value < 0 else format_number(value)


def _divide(left: Number, right: Number) -> Number:
    if isinstance(left, int) and isinstance(right, int) and right != 0 and left % right == 0:
        return left // right
    return left / right


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: _divide,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: _power,
}
_OPERATOR_HINTS: dict[type[ast.operator], str] = {
    ast.BitXor: "'^' is not a power here; write ** for powers (2 ** 10).",
    ast.MatMult: "'@' is not an arithmetic operator.",
}


class _Evaluator(ast.NodeVisitor):
    def visit_Constant(self, node: ast.Constant) -> Number:
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculationError(f"Only numbers can be calculated, not {node.value!r}. {_ALLOWED}")
        return _check_integer_size(node.value)  # 0xfff... packs more digits than it has characters

    def visit_Name(self, node: ast.Name) -> Number:
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id in FUNCTIONS:
            raise CalculationError(f"{node.id} is a function; call it with parentheses: {node.id}(...).")
        raise CalculationError(f"Unknown name {node.id!r}. {_ALLOWED}")

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Number:
        operand: Number = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return +operand
        raise CalculationError(f"The operator {_source(node)!r} is not supported. {_ALLOWED}")

    def visit_BinOp(self, node: ast.BinOp) -> Number:
        operation = _BINARY.get(type(node.op))
        if operation is None:
            hint = _OPERATOR_HINTS.get(type(node.op), "That operator is not supported.")
            raise CalculationError(f"{hint} {_ALLOWED}")
        left: Number = self.visit(node.left)
        right: Number = self.visit(node.right)
        # Refuse before multiplying: the product's size is known from the factors' sizes.
        if (
            isinstance(node.op, ast.Mult)
            and isinstance(left, int)
            and isinstance(right, int)
            and left.bit_length() + right.bit_length() - 1 > _MAX_INTEGER_BITS
        ):
            raise _too_many_digits()
        return _check_integer_size(operation(left, right))

    def visit_Tuple(self, node: ast.Tuple) -> Number:
        raise CalculationError(
            "Commas only separate function arguments; write numbers without thousands separators "
            "(1000, not 1,000) and calculate one expression at a time."
        )

    def visit_Call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            called = node.func.id if isinstance(node.func, ast.Name) else _source(node.func)
            raise CalculationError(f"Unknown function {called!r}. {_ALLOWED}")
        name = node.func.id
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise CalculationError(f"{name}() takes plain arguments only, like {name}(2).")
        arguments = [self.visit(arg) for arg in node.args]
        try:
            result = FUNCTIONS[name](*arguments)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, CalculationError):
                raise
            shown = ", ".join(format_number(a) for a in arguments)
            raise CalculationError(f"{name}({shown}) cannot be calculated: {exc}.") from exc
        return _check_integer_size(result)

    def generic_visit(self, node: ast.AST) -> Any:
        raise CalculationError(f"{_source(node)!r} is not allowed in a calculation. {_ALLOWED}")


def _source(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # unparse can fail on odd trees; the node kind is still informative
        return type(node).__name__
