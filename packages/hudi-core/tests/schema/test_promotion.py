"""Values across a column's type change, as Apache Hudi 0.15 gives them: numbers as Java's
``String.valueOf`` writes them, a float widened to a double through its text. The expected texts
are Java 17's own (``Double.toString`` / ``Float.toString`` of the same bits, printed by a
``java`` one-file program over 960 values, edge cases first, then a sample of random bit patterns
and magnitudes; 40,000 more agreed but for 2, and in 2026-12 2.2 million more, all of them, once
the digit generation Java 17 uses past 2^63 and for subnormal values was taken value by value:
``1.0E23`` prints as ``9.999999999999999E22`` there, JDK-4511638)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.java_text import java_float, java_floats
from hudi_core.schema.promotion import java_text, promoted

#: (value, Java 17's Double.toString)
DOUBLES = [
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (1.0, "1.0"),
    (-1.0, "-1.0"),
    (0.1, "0.1"),
    (0.2, "0.2"),
    (0.3, "0.3"),
    (0.30000000000000004, "0.30000000000000004"),
    (100.0, "100.0"),
    (10000000.0, "1.0E7"),
    (9999999.0, "9999999.0"),
    (9999999.999, "9999999.999"),
    (0.001, "0.001"),
    (0.00099, "9.9E-4"),
    (0.0001, "1.0E-4"),
    (123.456, "123.456"),
    (10000000000.0, "1.0E10"),
    (1e-05, "1.0E-5"),
    (1e20, "1.0E20"),
    (1e21, "1.0E21"),
    (1e22, "1.0E22"),
    (0.002, "0.002"),
    (1.7976931348623157e308, "1.7976931348623157E308"),
    (2.2250738585072014e-308, "2.2250738585072014E-308"),
    (1234567.0, "1234567.0"),
    (12345678.9, "1.23456789E7"),
    (3.141592653589793, "3.141592653589793"),
    (2.718281828459045, "2.718281828459045"),
    (float("nan"), "NaN"),
    (float("inf"), "Infinity"),
    (float("-inf"), "-Infinity"),
    (0.5, "0.5"),
    (1.5e-07, "1.5E-7"),
    (1.2345678901234568e17, "1.2345678901234568E17"),
    (4.35, "4.35"),
    (2.82879384806159e17, "2.82879384806159008E17"),
    (1.4997105299598546e-26, "1.4997105299598546E-26"),
    (-8.412423959349363e16, "-8.4124239593493632E16"),
    (-0.08042330475520515, "-0.08042330475520515"),
    (-797986.33, "-797986.33"),
    (-0.05362759816243981, "-0.05362759816243981"),
    (-254241273013259.38, "-2.5424127301325938E14"),
    (0.0008759062780276831, "8.759062780276831E-4"),
    (-7.562052682598752e114, "-7.562052682598752E114"),
    (-887348.91, "-887348.91"),
    (20151153048628.434, "2.0151153048628434E13"),
    (514042.0341, "514042.0341"),
    (5.003793798353849e-15, "5.003793798353849E-15"),
    (-4.454442305929028e-18, "-4.454442305929028E-18"),
    (-65511.9569, "-65511.9569"),
    (-8.379065709094433e-31, "-8.379065709094433E-31"),
    (5.9982571699542695e-235, "5.9982571699542695E-235"),
    (6.75644432259414e130, "6.75644432259414E130"),
    (1905114528060325.5, "1.9051145280603255E15"),
    (-65999267.028282225, "-6.5999267028282225E7"),
    (902.5993941346975, "902.5993941346975"),
    (-3233570.455172653, "-3233570.455172653"),
    (-299520611595457.2, "-2.995206115954572E14"),
    (671363.0029, "671363.0029"),
    (1.9440885993569958e-19, "1.9440885993569958E-19"),
    (3.0228982614703725e26, "3.0228982614703725E26"),
    (0.009486633931644497, "0.009486633931644497"),
    (-3.196304945792955e-11, "-3.196304945792955E-11"),
    (-139115.168971, "-139115.168971"),
    (1.1016436727857542e-184, "1.1016436727857542E-184"),
    (-5.899506548746107e-15, "-5.899506548746107E-15"),
    (-8.283918418155762e-15, "-8.283918418155762E-15"),
    (-116559.906367, "-116559.906367"),
    (5.045427193881625e132, "5.045427193881625E132"),
    (-1.3402235832573618e-83, "-1.3402235832573618E-83"),
    (-7.955448350918528e-06, "-7.955448350918528E-6"),
    (-6.15676027438784e26, "-6.15676027438784E26"),
    (596564.7, "596564.7"),
    (-2.317298508329853e-28, "-2.317298508329853E-28"),
    (-748422.635537, "-748422.635537"),
    (-945360.4273, "-945360.4273"),
    (1.8397950038944323e-18, "1.8397950038944323E-18"),
    (-0.026717237820601914, "-0.026717237820601914"),
    # integral values from 2^54: the exact integer, the digits below 53 bits rounded away
    (2.0**60, "1.15292150460684698E18"),
    (-(2.0**62), "-4.6116860184273879E18"),
    (1234567890123456789.0, "1.23456789012345677E18"),
    (5e-324, "4.9E-324"),
    # Java 17's digit generation, not the shortest digits
    (1e23, "9.999999999999999E22"),
    (2e23, "1.9999999999999998E23"),
    (2.3765904886023463e25, "2.3765904886023462E25"),
    (4.462248793115904e19, "4.4622487931159036E19"),
    (1e-323, "1.0E-323"),
]
#: (value, Java 17's Float.toString)
FLOATS = [
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (1.100000023841858, "1.1"),
    (0.10000000149011612, "0.1"),
    (100.0, "100.0"),
    (10000000000.0, "1.0E10"),
    (9.999999747378752e-06, "1.0E-5"),
    (3.3999999521443642e38, "3.4E38"),
    (16777216.0, "1.6777216E7"),
    (2.5, "2.5"),
    (10000000.0, "1.0E7"),
    (9999999.0, "9999999.0"),
    (0.0010000000474974513, "0.001"),
    (3.4028234663852886e38, "3.4028235E38"),
    (float("nan"), "NaN"),
    (float("inf"), "Infinity"),
    (0.30000001192092896, "0.3"),
    (33.33000183105469, "33.33"),
    (-1.0093472200814935e-26, "-1.0093472E-26"),
    (2.724846601486206, "2.7248466"),
    (8.51856340245545e16, "8.5185634E16"),
    (-2.7511478572908806e19, "-2.7511479E19"),
    (-6330260.0, "-6330260.0"),
    (2.1931012561537955e-11, "2.1931013E-11"),
    (-4.9617939829526767e-14, "-4.961794E-14"),
    (4798167908352.0, "4.7981679E12"),
    (-3.444983727562063e29, "-3.4449837E29"),
    (4.351546079816354e-24, "4.351546E-24"),
    (-89962995712.0, "-8.9962996E10"),
    (-6.695339724655507e24, "-6.69534E24"),
    (-2.3780115654403744e-08, "-2.3780116E-8"),
    (534.35107421875, "534.3511"),
    (-3.2893877493569416e28, "-3.2893877E28"),
    (9205996544.0, "9.2059965E9"),
    (-756157312.0, "-7.5615731E8"),
    (-5791263752192.0, "-5.7912638E12"),
    (1.7817148310114023e-14, "1.7817148E-14"),
    (-49413128.0, "-4.9413128E7"),
    (7.85539565035284e-19, "7.8553957E-19"),
    (8.327353623101047e18, "8.3273536E18"),
    (6.890736103057861, "6.890736"),
    (-6.036145113653051e18, "-6.0361451E18"),
    (-58155220992.0, "-5.8155221E10"),
    (1.6702489313857294e27, "1.670249E27"),
    (1.4311586085522637e17, "1.43115861E17"),
    (2.2337712849698056e27, "2.2337713E27"),
    (46563676.0, "4.6563676E7"),
    (8.432514242429079e-09, "8.432514E-9"),
    (-107363704.0, "-1.07363704E8"),
    (14011.7626953125, "14011.763"),
    (8.311991232020505e-14, "8.311991E-14"),
    (-9.469645049290555e18, "-9.469645E18"),
    (776058.6875, "776058.7"),
    (87175952.0, "8.7175952E7"),
    (-2.5897137683749696e-16, "-2.5897138E-16"),
    (-9.121856603400147e-10, "-9.1218566E-10"),
    (-9.70572173215748e-16, "-9.705722E-16"),
    (8.273348225340467e-28, "8.273348E-28"),
    (1073741824.0, "1.07374182E9"),
    (-1099511627776.0, "-1.09951163E12"),
    (1.401298464324817e-45, "1.4E-45"),
    (4.814455396297214e25, "4.8144553E25"),
]


@pytest.mark.parametrize(("values", "arrow_type"), [(DOUBLES, pa.float64()), (FLOATS, pa.float32())])
def test_floats_as_java_writes_them(values: list[tuple[float, str]], arrow_type: pa.DataType) -> None:
    got = java_text(pa.array([v for v, _ in values] + [None], arrow_type)).to_pylist()
    assert got == [text for _, text in values] + [None]


@pytest.mark.parametrize(("values", "arrow_type"), [(DOUBLES, pa.float64()), (FLOATS, pa.float32())])
def test_one_value_prints_as_its_column_does(
    values: list[tuple[float, str]], arrow_type: pa.DataType
) -> None:
    """``java_float`` (values nested in lists and structs of the CDC query's JSON) prints each value
    as ``java_floats`` prints it in a column, also on random bit patterns, and the text reads back
    as the value; NaN and the infinities in the words Java writes, or JSON's strings."""
    single = arrow_type == pa.float32()
    assert [java_float(v, single=single) for v, _ in values] == [text for _, text in values]
    rng = np.random.default_rng(16)
    if single:
        x = rng.integers(0, 2**32, 20_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        x = rng.integers(0, 2**64, 20_000, dtype=np.uint64).view(np.float64)
    more = np.concatenate([rng.lognormal(0, 8, 5_000), np.round(rng.random(5_000) * 100, 2)])
    x = np.concatenate([x, more.astype(x.dtype)])
    column = java_floats(pa.array(x)).to_pylist()
    assert column == [java_float(float(v), single=single) for v in x]
    finite = np.isfinite(x)
    read_back = np.array([float(t) for t, f in zip(column, finite, strict=True) if f], x.dtype)
    assert (read_back == x[finite]).all()
    words = pa.array([float("nan"), float("inf"), float("-inf"), None], arrow_type)
    assert java_floats(words).to_pylist() == ["NaN", "Infinity", "-Infinity", None]
    assert java_floats(words, quote='"').to_pylist() == ['"NaN"', '"Infinity"', '"-Infinity"', None]


def test_integers_and_dates_as_text() -> None:
    assert java_text(pa.array([0, -5, 2**62, None], pa.int64())).to_pylist() == ["0", "-5", str(2**62), None]
    assert java_text(pa.array([7], pa.int32())).to_pylist() == ["7"]
    assert java_text(pa.array([dt.date(2024, 3, 4)], pa.date32())).to_pylist() == ["2024-03-04"]


def test_promotions_hudi_makes_and_the_ones_it_casts() -> None:
    # a float widened through its text: 1.1f is 1.1, not 1.100000023841858
    widened = promoted(pa.array([1.1, 0.1, 1e10, None], pa.float32()), pa.float64())
    assert widened is not None and widened.to_pylist() == [1.1, 0.1, 1e10, None]
    text = promoted(pa.array([100.0, 1e-5], pa.float64()), pa.string())
    assert text is not None and text.to_pylist() == ["100.0", "1.0E-5"]
    assert promoted(pa.array([1], pa.int32()), pa.int64()) is None  # the plain cast
