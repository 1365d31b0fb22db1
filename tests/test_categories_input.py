"""FeatureEncoder: categorical / ordinal declarations, codes by value, missing values, errors."""

import numpy as np
import pandas as pd
import pytest

from jitree.model.categories import (
    FEATURE_CATEGORICAL,
    FEATURE_NUMERIC,
    FEATURE_ORDINAL,
    FeatureEncoder,
)
from jitree.model.validation import check_X, raise_nonfinite


def encode(X, **declarations):
    encoder = FeatureEncoder(**declarations)
    return encoder, encoder.fit_transform(X)


def decode(encoder, encoded, feature):
    """The category value of each row (None where the code is NaN): the naive inverse."""
    return [None if np.isnan(code) else encoder.categories_[feature][int(code)]
            for code in encoded[:, feature]]


# -- pandas detection --------------------------------------------------------------------------
def test_category_and_ordered_category_columns_are_detected():
    X = pd.DataFrame({
        "size": [1.5, 2.5, np.nan, 4.0],
        "colour": pd.Categorical(["red", "blue", None, "red"],
                                 categories=["blue", "red", "green"]),
        "grade": pd.Categorical(["low", "high", "mid", "low"],
                                categories=["low", "mid", "high"], ordered=True),
    })
    encoder, encoded = encode(X)
    assert encoder.feature_kind_.dtype == np.int8
    assert encoder.feature_kind_.tolist() == [FEATURE_NUMERIC, FEATURE_CATEGORICAL,
                                              FEATURE_ORDINAL]
    assert not encoder.is_trivial
    assert encoder.categories_[0] is None
    # all declared categories, unused "green" included, in the dtype's order
    assert encoder.categories_[1].tolist() == ["blue", "red", "green"]
    assert encoder.categories_[2].tolist() == ["low", "mid", "high"]
    assert encoder.n_categories_.dtype == np.int32
    assert encoder.n_categories_.tolist() == [0, 3, 3]
    assert encoder.value_kind_ == [None, "string", "string"]
    assert encoder.feature_names_.tolist() == ["size", "colour", "grade"]
    np.testing.assert_array_equal(encoded, [[1.5, 1, 0], [2.5, 0, 2], [np.nan, np.nan, 1],
                                            [4.0, 1, 0]])


def test_unordered_category_declared_ordinal_keeps_dtype_order():
    X = pd.DataFrame({"c": pd.Categorical(["b", "c", "a"], categories=["c", "a", "b"])})
    encoder, encoded = encode(X, ordinal_features=["c"])
    assert encoder.feature_kind_.tolist() == [FEATURE_ORDINAL]
    assert encoder.categories_[0].tolist() == ["c", "a", "b"]
    assert encoded[:, 0].tolist() == [2, 0, 1]


def test_ordered_category_declared_categorical_is_categorical():
    X = pd.DataFrame({"c": pd.Categorical(["b", "a"], categories=["b", "a"], ordered=True)})
    encoder, _ = encode(X, categorical_features=[0])
    assert encoder.feature_kind_.tolist() == [FEATURE_CATEGORICAL]


def test_numeric_category_dtype_keeps_its_values():
    X = pd.DataFrame({"n": pd.Categorical([30, 10, 20, 10], categories=[30, 20, 10])})
    encoder, encoded = encode(X)
    assert encoder.value_kind_ == ["number"]
    assert encoder.categories_[0].tolist() == [30, 20, 10]
    assert decode(encoder, encoded, 0) == [30, 10, 20, 10]


# -- declared columns --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [object, "str"])
def test_declared_string_column_sorted_categories_and_missing(dtype):
    values = ["pear", "apple", None, "pear", np.nan, "fig"]
    X = pd.DataFrame({"x": np.arange(6.0), "fruit": pd.Series(values, dtype=dtype)})
    encoder, encoded = encode(X, categorical_features=["fruit"])
    assert encoder.categories_[1].tolist() == ["apple", "fig", "pear"]
    assert all(type(category) is str for category in encoder.categories_[1])
    assert decode(encoder, encoded, 1) == ["pear", "apple", None, "pear", None, "fig"]
    np.testing.assert_array_equal(encoded[:, 0], np.arange(6.0))


def test_declared_string_ordinal_uses_sorted_levels():
    X = pd.DataFrame({"level": ["b", "c", "a", "b"]})
    encoder, encoded = encode(X, ordinal_features=["level"])
    assert encoder.feature_kind_.tolist() == [FEATURE_ORDINAL]
    assert encoder.categories_[0].tolist() == ["a", "b", "c"]
    assert encoded[:, 0].tolist() == [1, 2, 0, 1]


def test_numeric_ordinal_codes_are_ranks():
    X = np.array([[10.0, 0.5], [3.0, 0.1], [7.0, np.nan], [3.0, 0.2]])
    encoder, encoded = encode(X, ordinal_features=[0])
    assert encoder.categories_[0].tolist() == [3.0, 7.0, 10.0]
    np.testing.assert_array_equal(encoded, [[2, 0.5], [0, 0.1], [1, np.nan], [0, 0.2]])


def test_numeric_categorical_codes_skip_nan():
    X = np.array([[5.0], [np.nan], [-1.0], [5.0]])
    encoder, encoded = encode(X, categorical_features=[0])
    assert encoder.categories_[0].tolist() == [-1.0, 5.0]
    assert encoder.value_kind_ == ["number"]
    np.testing.assert_array_equal(encoded[:, 0], [1, np.nan, 0, 1])


def test_bool_frame_column_is_numeric_unless_declared():
    X = pd.DataFrame({"flag": [True, False, True], "x": [1, 2, 3]})
    encoder, encoded = encode(X)
    assert encoder.is_trivial
    np.testing.assert_array_equal(encoded, [[1, 1], [0, 2], [1, 3]])
    encoder, encoded = encode(X, categorical_features=["flag"])
    assert encoder.value_kind_[0] == "bool"
    assert encoder.categories_[0].tolist() == [False, True]
    assert encoded[:, 0].tolist() == [1, 0, 1]
    # beside int64 (large values too) and float32 columns: the float64 values the entries
    # of pandas' object array take, converted column by column instead of entry by entry
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"flag": rng.random(200) < 0.5, "i": rng.integers(-2**62, 2**62, 200),
                      "f": rng.normal(size=200).astype(np.float32)})
    assert X.to_numpy().dtype == object
    encoder, encoded = encode(X)
    assert encoded.dtype == np.float64
    np.testing.assert_array_equal(encoded, X.to_numpy().astype(np.float64))


def test_nullable_pandas_dtypes_become_nan():
    X = pd.DataFrame({"n": pd.array([1, None, 3], dtype="Int64"),
                      "b": pd.array([True, None, False], dtype="boolean")})
    encoder, encoded = encode(X, categorical_features=["b"])
    np.testing.assert_array_equal(encoded[:, 0], [1, np.nan, 3])
    assert decode(encoder, encoded, 1) == [True, None, False]


@pytest.mark.parametrize("declaration", [[1, 3], ["b", "d"], [False, True, False, True],
                                         np.array([1, 3]), np.array([False, True, False, True])])
def test_declarations_by_index_name_or_mask(declaration):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 4, size=(50, 4)).astype(float), columns=list("abcd"))
    encoder, encoded = encode(X, categorical_features=declaration)
    assert encoder.feature_kind_.tolist() == [FEATURE_NUMERIC, FEATURE_CATEGORICAL,
                                              FEATURE_NUMERIC, FEATURE_CATEGORICAL]
    if not isinstance(declaration[0], str):  # names need a DataFrame; positions do not
        array_encoder, array_encoded = encode(X.to_numpy(), categorical_features=declaration)
        np.testing.assert_array_equal(array_encoded, encoded)
        assert array_encoder.feature_names_ is None


def test_numpy_object_array_with_strings():
    X = np.array([[1.5, "red", 3], [2.5, "blue", None], [np.nan, None, 1],
                  [0.5, "red", 2]], dtype=object)
    encoder, encoded = encode(X, categorical_features=[1])
    assert encoder.categories_[1].tolist() == ["blue", "red"]
    np.testing.assert_array_equal(encoded, [[1.5, 1, 3], [2.5, 0, np.nan], [np.nan, np.nan, 1],
                                            [0.5, 1, 2]])
    predicted = encoder.transform(np.array([[1.0, "blue", 1], [1.0, "green", 1]],
                                           dtype=object))
    np.testing.assert_array_equal(predicted[:, 1], [0, np.nan])


def test_list_mixing_strings_and_numbers_keeps_numbers():
    encoder, encoded = encode([["a", 1.5], ["b", 2.5]], categorical_features=[0])
    np.testing.assert_array_equal(encoded, [[0, 1.5], [1, 2.5]])


def test_five_thousand_categories():
    rng = np.random.default_rng(1)
    names = np.array([f"category_{k:05d}" for k in range(6000)], dtype=object)
    values = np.concatenate([names, rng.choice(names, 20_000)])
    X = pd.DataFrame({"c": values, "x": rng.random(values.size)})
    encoder, encoded = encode(X, categorical_features=["c"])
    assert encoder.n_categories_[0] == 6000
    assert np.array_equal(encoder.categories_[0][encoded[:, 0].astype(int)], values)
    category_frame = X.assign(c=pd.Categorical(values, categories=names[::-1]))
    encoder, encoded = encode(category_frame)
    assert encoder.n_categories_[0] == 6000
    assert np.array_equal(encoder.categories_[0][encoded[:, 0].astype(int)], values)


# -- transform: codes by value -----------------------------------------------------------------
def test_predict_category_dtype_in_another_order_maps_by_value():
    fit_frame = pd.DataFrame({"c": pd.Categorical(["a", "b", "c"], categories=["a", "b", "c"])})
    encoder, _ = encode(fit_frame)
    predict_frame = pd.DataFrame({"c": pd.Categorical(["c", "a", "b", None, "z"],
                                                      categories=["z", "c", "b", "a"])})
    np.testing.assert_array_equal(encoder.transform(predict_frame)[:, 0],
                                  [2, 0, 1, np.nan, np.nan])


def test_predict_unseen_and_missing_values_become_nan():
    X = pd.DataFrame({"s": ["x", "y", "x"], "v": [1.0, 2.0, 3.0]})
    encoder, _ = encode(X, categorical_features=["s"])
    predict_frame = pd.DataFrame({"s": pd.Series(["y", "unseen", None, pd.NA, np.nan, "x"],
                                                 dtype=object),
                                  "v": [1.0, np.nan, 3.0, 4.0, 5.0, 6.0]})
    encoded = encoder.transform(predict_frame)
    np.testing.assert_array_equal(encoded[:, 0], [1, np.nan, np.nan, np.nan, np.nan, 0])
    np.testing.assert_array_equal(encoded[:, 1], predict_frame["v"])
    # the predict column as a category dtype, or as plain strings, codes the same
    as_category = predict_frame.assign(s=predict_frame["s"].astype("category"))
    np.testing.assert_array_equal(encoder.transform(as_category), encoded)


def test_predict_numeric_categories_by_value_across_int_and_float():
    encoder, _ = encode(np.array([[3], [1], [2]]), categorical_features=[0])
    encoded = encoder.transform(np.array([[2.0], [3.0], [4.0], [np.nan]]))
    np.testing.assert_array_equal(encoded[:, 0], [1, 2, np.nan, np.nan])


def test_transform_repeats_fit_encoding():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"s": rng.choice(["u", "v", "w", None], 500).astype(object),
                      "c": pd.Categorical(rng.choice(["p", "q"], 500)),
                      "x": rng.random(500)})
    encoder, encoded = encode(X, categorical_features=["s"])
    np.testing.assert_array_equal(encoder.transform(X), encoded)


def test_all_missing_column_at_predict_is_accepted():
    encoder, _ = encode(pd.DataFrame({"s": ["a", "b"]}), categorical_features=[0])
    encoded = encoder.transform(pd.DataFrame({"s": [np.nan, np.nan]}))
    assert np.isnan(encoded).all()


# -- output dtype and the fast path ------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_plain_numeric_array_is_not_copied(dtype, order):
    X = np.asarray(np.random.default_rng(3).random((20, 3)), dtype=dtype, order=order)
    X[0, 0] = np.nan
    encoder, encoded = encode(X)
    assert encoder.is_trivial
    assert encoded is X and np.shares_memory(encoded, X)
    encoded = encoder.transform(X)
    assert np.shares_memory(encoded, X)


def test_is_trivial_follows_the_kinds_when_they_change():
    """is_trivial is kept with the kinds it was found for: kinds changed in place or
    replaced give the new answer."""
    X = np.random.default_rng(3).random((20, 3))
    encoder, _ = encode(X)
    assert encoder.is_trivial and encoder.is_trivial
    encoder.feature_kind_[1] = FEATURE_CATEGORICAL
    assert not encoder.is_trivial
    encoder.feature_kind_ = np.zeros(3, dtype=np.int8)
    assert encoder.is_trivial


def test_trivial_encoding_equals_check_X():
    X = np.arange(12).reshape(4, 3)
    encoder, encoded = encode(X, categorical_features=[])
    expected = check_X(X, allow_nan=True)
    assert encoded.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(encoded, expected)


def test_output_dtype_rules():
    X32 = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    assert encode(X32, categorical_features=[0])[1].dtype == np.float32
    assert encode(X32.astype(np.float64), categorical_features=[0])[1].dtype == np.float64
    assert encode(np.array([[1, 2], [3, 4]]), categorical_features=[0])[1].dtype == np.float64
    only_categories = pd.DataFrame({"c": pd.Categorical(["a", "b"])})
    assert encode(only_categories)[1].dtype == np.float32
    mixed = pd.DataFrame({"c": pd.Categorical(["a", "b"]),
                          "x": np.array([1, 2], dtype=np.float32),
                          "y": np.array([1, 2], dtype=np.float64)})
    assert encode(mixed)[1].dtype == np.float64
    assert encode(mixed.drop(columns="y"))[1].dtype == np.float32


def test_codes_beyond_float32_exact_integers_give_float64():
    encoder = FeatureEncoder()
    encoder.feature_kind_ = np.array([FEATURE_CATEGORICAL], dtype=np.int8)
    encoder.n_categories_ = np.array([2**24 + 1], dtype=np.int32)
    for order in ("C", "F"):
        encoder.n_categories_ = np.array([2**24 + 1], dtype=np.int32)
        assert encoder._assemble([np.zeros(2)], order).dtype == np.float64
        encoder.n_categories_ = np.array([2**24], dtype=np.int32)
        assert encoder._assemble([np.zeros(2)], order).dtype == np.float32
    encoder.n_categories_ = np.array([2**24 + 1], dtype=np.int32)
    assert encoder._encoded_dtype(True) == np.float64  # the compiled encoder's rule


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("declaration, error, message", [
    ([-1], ValueError, "negative"),
    ([5], ValueError, "out of range"),
    ([True, False], ValueError, "boolean mask"),
    (["a"], ValueError, "DataFrame"),
    ("a", TypeError, "must be None"),
    (3, TypeError, "must be None"),
    ([0.5], TypeError, "only column indices"),
    ([0, "a"], TypeError, "only column indices"),
    (np.zeros((1, 1), dtype=int), TypeError, "1-D"),
])
def test_bad_declarations(declaration, error, message):
    with pytest.raises(error, match=message):
        FeatureEncoder(categorical_features=declaration).fit_transform(np.zeros((3, 3)))
    with pytest.raises(error, match=message):
        FeatureEncoder(ordinal_features=declaration).fit_transform(np.zeros((3, 3)))


def test_unknown_names_are_listed():
    X = pd.DataFrame({"a": [1.0], "b": [2.0]})
    with pytest.raises(ValueError, match=r"\['zz', 'yy'\]"):
        FeatureEncoder(categorical_features=["a", "zz", "yy"]).fit_transform(X)


def test_column_declared_twice_is_named():
    X = pd.DataFrame({"a": [1.0], "b": [2.0]})
    with pytest.raises(ValueError, match="'b' declared in both"):
        FeatureEncoder(categorical_features=["b"], ordinal_features=[1]).fit_transform(X)


@pytest.mark.parametrize("dtype", [object, "str"])
def test_undeclared_string_frame_column_asks_for_a_declaration(dtype):
    X = pd.DataFrame({"x": [1.0, 2.0], "city": pd.Series(["Oslo", "Rome"], dtype=dtype)})
    with pytest.raises(TypeError, match="'city'.*categorical_features or ordinal_features"):
        FeatureEncoder().fit_transform(X)
    with pytest.raises(TypeError, match="'city'.*categorical_features or ordinal_features"):
        check_X(X)


def test_object_array_non_declared_column_must_be_numeric():
    X = np.array([["a", "b"], ["c", "d"]], dtype=object)
    with pytest.raises(TypeError, match="column 1 .*non-numeric"):
        FeatureEncoder(categorical_features=[0]).fit_transform(X)


@pytest.mark.parametrize("values", [["a", 1], ["a", 1.5, None]])
def test_mixed_types_in_a_categorical_column(values):
    frame = pd.DataFrame({"mixed": pd.Series(values, dtype=object)})
    with pytest.raises(TypeError, match="'mixed' of X mixes"):
        FeatureEncoder(categorical_features=[0]).fit_transform(frame)
    array = np.array(values, dtype=object).reshape(-1, 1)
    with pytest.raises(TypeError, match="column 0 of X mixes"):
        FeatureEncoder(categorical_features=[0]).fit_transform(array)


def test_value_type_change_at_predict():
    encoder, _ = encode(pd.DataFrame({"s": ["a", "b"]}), categorical_features=["s"])
    with pytest.raises(TypeError, match="'s'.*string categories at fit.*number values"):
        encoder.transform(pd.DataFrame({"s": [1.0, 2.0]}))
    with pytest.raises(TypeError, match="'s'.*string categories at fit.*number values"):
        encoder.transform(pd.DataFrame({"s": pd.Categorical([1, 2])}))
    encoder, _ = encode(np.array([[1.0], [2.0]]), categorical_features=[0])
    with pytest.raises(TypeError, match="column 0.*number categories at fit.*string values"):
        encoder.transform(np.array([["a"], ["b"]], dtype=object))


def test_wrong_number_of_columns_at_predict():
    encoder, _ = encode(np.zeros((3, 2)), categorical_features=[0])
    with pytest.raises(ValueError, match="3 features.*fitted with 2"):
        encoder.transform(np.zeros((3, 3)))
    trivial, _ = encode(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="1 features.*fitted with 2"):
        trivial.transform(np.zeros((3, 1)))


@pytest.mark.parametrize("declaration", [None, [0], [1]])
def test_infinity_refused_nan_accepted(declaration):
    X = np.array([[1.0, 2.0], [np.nan, 3.0]])
    encoded = FeatureEncoder(categorical_features=declaration).fit_transform(X)
    assert np.isnan(encoded[1, 0])
    X[0, 1] = -np.inf
    with pytest.raises(ValueError, match="infinity"):
        FeatureEncoder(categorical_features=declaration).fit_transform(X)


def test_infinity_in_frame_numeric_column_at_predict():
    encoder, _ = encode(pd.DataFrame({"c": pd.Categorical(["a"]), "x": [1.0]}))
    with pytest.raises(ValueError, match="infinity.*'x'"):
        encoder.transform(pd.DataFrame({"c": pd.Categorical(["a"]), "x": [np.inf]}))


@pytest.mark.parametrize("X, error, message", [
    (np.zeros((0, 3)), ValueError, "0 sample"),
    (np.zeros((3, 0)), ValueError, "0 feature"),
    (np.zeros(3), ValueError, "Expected 2D array"),
    (np.zeros((2, 2, 2)), ValueError, "Expected 2D array"),
    (None, ValueError, "None"),
    (np.zeros((2, 2), dtype=complex), ValueError, "Complex"),
    (pd.DataFrame({"a": []}), ValueError, "0 sample"),
])
@pytest.mark.parametrize("declaration", [None, [0]])
def test_shape_errors_as_check_X(X, error, message, declaration):
    if declaration is not None and X is not None and X.ndim == 2 and X.shape[1] == 0:
        declaration = None  # an index into no column is its own error
    with pytest.raises(error, match=message):
        FeatureEncoder(categorical_features=declaration).fit_transform(X)


# -- validation.py ---------------------------------------------------------------------------
def test_check_X_allow_nan():
    X = np.array([[1.0, np.nan]], dtype=np.float32)
    with pytest.raises(ValueError, match="NaN"):
        check_X(X)
    assert check_X(X, allow_nan=True) is X
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        check_X(X, allow_nan=True)


def test_raise_nonfinite_message_is_neutral():
    with pytest.raises(ValueError, match="contains NaN") as caught:
        raise_nonfinite(np.array([[np.nan]]), "y")
    assert "yet" not in str(caught.value)
